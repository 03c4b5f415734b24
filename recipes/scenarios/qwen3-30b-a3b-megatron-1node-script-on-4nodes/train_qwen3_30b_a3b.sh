#!/bin/bash
# Qwen3-30B-A3B pretraining with Megatron-LM.
# Developed on a single 8-GPU node (all gradient traffic on NVLink, so the DDP
# overlap flags were never turned on); later launched on 4 H200 nodes by setting
# NUM_NODES=4 in the job script.

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_IB_TIMEOUT=22
export NCCL_SOCKET_IFNAME=eth0

GPUS_PER_NODE=8
NUM_NODES=${NUM_NODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-29500}

CKPT_DIR=${CKPT_DIR:-/mnt/ckpt/qwen3-30b-a3b}
DATA_PREFIX=${DATA_PREFIX:-/mnt/data/pretrain_mix/text_document}

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --node_rank $NODE_RANK
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)

MODEL_ARGS=(
    --use-mcore-models
    --transformer-impl transformer_engine
    --num-layers 48
    --hidden-size 2048
    --ffn-hidden-size 6144
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 4
    --kv-channels 128
    --qk-layernorm
    --seq-length 4096
    --max-position-embeddings 40960
    --position-embedding-type rope
    --rotary-base 1000000
    --swiglu
    --normalization RMSNorm
    --norm-epsilon 1e-6
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --vocab-size 151936
    --make-vocab-size-divisible-by 128
)

MOE_ARGS=(
    --num-experts 128
    --moe-router-topk 8
    --moe-ffn-hidden-size 768
    --moe-router-load-balancing-type aux_loss
    --moe-aux-loss-coeff 1e-3
    --moe-router-dtype fp32
    --moe-grouped-gemm
    --moe-token-dispatcher-type alltoall
    --moe-permute-fusion
)

TRAINING_ARGS=(
    --micro-batch-size 2
    --global-batch-size 512
    --train-iters 100000
    --lr 3.0e-4
    --min-lr 3.0e-5
    --lr-decay-style cosine
    --lr-warmup-iters 2000
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --clip-grad 1.0
    --bf16
    --use-flash-attn
    --recompute-granularity selective
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 1
    --pipeline-model-parallel-size 1
    --expert-model-parallel-size 8
    --expert-tensor-parallel-size 1
)

DATA_ARGS=(
    --data-path $DATA_PREFIX
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model Qwen/Qwen3-30B-A3B
    --split 99,1,0
    --num-workers 4
)

LOGGING_ARGS=(
    --log-interval 10
    --log-throughput
    --save-interval 2000
    --eval-interval 2000
    --eval-iters 20
    --save $CKPT_DIR
    --load $CKPT_DIR
    --tensorboard-dir $CKPT_DIR/tb
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${MOE_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${LOGGING_ARGS[@]}
