#!/bin/bash
# Llama 3 8B pretraining with Megatron-LM, tuned on one 8x H100 80GB node.
# TP=4 and full recompute keep the 8k-token micro-batch inside 80 GB with room
# for the fp32 logits of the 128k vocabulary.
# Usage (from the root of a Megatron-LM checkout):
#   bash pretrain_llama3_8b.sh <checkpoint dir> <tokenizer dir> <data prefix>

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_IB_SL=1
export TORCH_NCCL_AVOID_RECORD_STREAMS=1

CHECKPOINT_PATH=${1:-/checkpoints/llama3-8b}
TOKENIZER_MODEL=${2:-meta-llama/Meta-Llama-3.1-8B}
DATA_PATH=${3:-/data/dclm/dclm_text_document}

GPUS_PER_NODE=8
NUM_NODES=${SLURM_NNODES:-1}
NODE_RANK=${SLURM_NODEID:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-6000}

TP=4
PP=1
MBS=1
GBS=128
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
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
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
    --init-method-std 0.02
)

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 50000
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
    --cross-entropy-loss-fusion
    --recompute-granularity full
    --recompute-method uniform
    --recompute-num-layers 1
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)

DATA_ARGS=(
    --data-path $DATA_PATH
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model $TOKENIZER_MODEL
    --split 99,1,0
    --num-workers 4
)

LOGGING_ARGS=(
    --log-interval 10
    --log-throughput
    --save-interval 5000
    --eval-interval 2000
    --eval-iters 20
    --save $CHECKPOINT_PATH
    --load $CHECKPOINT_PATH
    --tensorboard-dir ${CHECKPOINT_PATH}/tensorboard
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    ${LOGGING_ARGS[@]}
