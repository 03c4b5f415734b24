#!/bin/bash
# Llama 3 70B pretraining with Megatron-LM on 8 nodes of H100 80GB, as the
# performance team tuned it: TP4 (inside the node) x PP4 with 5 virtual stages,
# SP with userbuffers TP overlap, distributed optimizer with both overlaps, and
# block recompute of the first 4 layers of each stage.
#   sbatch -N 8 --gpus-per-node 8 pretrain_llama3_70b.sh

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NVTE_FWD_LAYERNORM_SM_MARGIN=16
export NVTE_BWD_LAYERNORM_SM_MARGIN=16
export TORCH_NCCL_AVOID_RECORD_STREAMS=1

GPUS_PER_NODE=8
NUM_NODES=${SLURM_NNODES:-8}

TP=4
PP=4
VP=5
MBS=1
GBS=256
SEQ_LEN=8192

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --node_rank ${SLURM_NODEID:-0}
    --master_addr ${MASTER_ADDR:-localhost}
    --master_port ${MASTER_PORT:-6000}
)

MODEL_ARGS=(
    --use-mcore-models
    --transformer-impl transformer_engine
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length $SEQ_LEN
    --max-position-embeddings $SEQ_LEN
    --position-embedding-type rope
    --rotary-base 500000
    --swiglu
    --normalization RMSNorm
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --attention-dropout 0.0
    --hidden-dropout 0.0
)

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 50000
    --lr 1.5e-4
    --min-lr 1.5e-5
    --lr-decay-style cosine
    --lr-warmup-iters 2000
    --weight-decay 0.1
    --clip-grad 1.0
    --bf16
    --attention-backend fused
    --cross-entropy-loss-fusion
    --recompute-granularity full
    --recompute-method block
    --recompute-num-layers 4
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size $TP
    --pipeline-model-parallel-size $PP
    --num-virtual-stages-per-pipeline-rank $VP
    --sequence-parallel
    --tp-comm-overlap
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)

DATA_ARGS=(
    --data-path ${DATA_PATH:-/lustre/data/dclm/text_document}
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model meta-llama/Meta-Llama-3-70B
    --split 99,1,0
    --num-workers 4
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    --log-interval 1 --log-throughput --save-interval 2000 --eval-interval 2000 --eval-iters 0
