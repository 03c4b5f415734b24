#!/bin/bash
# Llama 3.1 405B pretraining with Megatron-LM + Megatron-FSDP (TP inside the node,
# parameters/grads/optimizer sharded across nodes, no pipeline).
# Written for 16 nodes of H100 80GB: TP8 + SP, full recompute of every layer and
# micro batch 1 to stay under 80 GB. Re-submitted unchanged on the H200 partition.
#   sbatch -N 16 --gpus-per-node 8 train_llama3_405b_mfsdp.sh

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_IB_SL=1
export NCCL_IB_TIMEOUT=19
export TORCH_NCCL_AVOID_RECORD_STREAMS=1
export NVTE_FWD_LAYERNORM_SM_MARGIN=16
export NVTE_BWD_LAYERNORM_SM_MARGIN=16

GPUS_PER_NODE=8
NUM_NODES=${SLURM_NNODES:-16}
NODE_RANK=${SLURM_NODEID:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-6000}

OUTPUT_DIR=${OUTPUT_DIR:-/lustre/runs/llama3-405b}
DATA_PATH=${DATA_PATH:-/lustre/data/fineweb_edu/text_document}

TP=8
MBS=1
GBS=256
SEQ_LEN=8192

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
    --num-layers 126
    --hidden-size 16384
    --ffn-hidden-size 53248
    --num-attention-heads 128
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length $SEQ_LEN
    --max-position-embeddings $SEQ_LEN
    --position-embedding-type rope
    --rotary-base 500000
    --use-rope-scaling
    --swiglu
    --normalization RMSNorm
    --norm-epsilon 1e-5
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --init-method-std 0.008
)

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 100000
    --lr 8.0e-5
    --min-lr 8.0e-7
    --lr-decay-style cosine
    --lr-warmup-iters 8000
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --clip-grad 1.0
    --bf16
    --use-flash-attn
    --cross-entropy-loss-fusion
    --recompute-granularity full
    --recompute-method block
    --recompute-num-layers 126
    --manual-gc
    --manual-gc-interval 50
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size 1
    --sequence-parallel
    --use-megatron-fsdp
    --data-parallel-sharding-strategy optim_grads_params
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
    --no-gradient-accumulation-fusion
    --init-model-with-meta-device
)

DATA_ARGS=(
    --data-path $DATA_PATH
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model meta-llama/Llama-3.1-405B
    --split 99,1,0
    --num-workers 4
)

LOGGING_ARGS=(
    --log-interval 1
    --log-throughput
    --save-interval 1000
    --eval-interval 1000
    --eval-iters 10
    --save $OUTPUT_DIR/checkpoints
    --load $OUTPUT_DIR/checkpoints
    --ckpt-format fsdp_dtensor
    --tensorboard-dir $OUTPUT_DIR/tensorboard
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${LOGGING_ARGS[@]}
