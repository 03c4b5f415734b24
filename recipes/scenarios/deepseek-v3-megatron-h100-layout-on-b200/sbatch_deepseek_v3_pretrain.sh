#!/bin/bash
#SBATCH --job-name=dsv3-pretrain
#SBATCH --nodes=32
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=04:00:00

# DeepSeek-V3 (671B) pretraining with Megatron-LM + Megatron-FSDP (no pipeline).
# Settings from the 32-node H100 bring-up: EP8 inside the node, parameters, grads and
# optimizer fully sharded over all 256 ranks, and full recompute of all 61 layers so
# that a 4k micro batch fits in 80 GB. Kept as-is when the job moved to B200 nodes.

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_IB_SL=1
export NCCL_IB_TIMEOUT=19
export NVTE_FWD_LAYERNORM_SM_MARGIN=16
export NVTE_BWD_LAYERNORM_SM_MARGIN=16
export NCCL_P2P_NET_CHUNKSIZE=2097152
export TORCH_NCCL_AVOID_RECORD_STREAMS=1

MEGATRON_PATH=${MEGATRON_PATH:-/opt/megatron-lm}
OUTPUT_PATH=${OUTPUT_PATH:-/lustre/runs/dsv3}
DATA_PATH=${DATA_PATH:-/lustre/data/dsv3_mix/text_document}

TP=1
EP=8
MBS=1
GBS=2048
SHARDING_STRATEGY=optim_grads_params

PRETRAIN_ARGS=(
    --distributed-timeout-minutes 60
    --tensor-model-parallel-size ${TP}
    --use-megatron-fsdp
    --data-parallel-sharding-strategy ${SHARDING_STRATEGY}
    --no-gradient-accumulation-fusion
    --init-model-with-meta-device
    --fsdp-double-buffer
    --calculate-per-token-loss
    --expert-model-parallel-size ${EP}
    --expert-tensor-parallel-size 1
    --context-parallel-size 1
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
    --use-mcore-models
    --transformer-impl transformer_engine
    --use-flash-attn
    --disable-bias-linear
    --micro-batch-size ${MBS}
    --global-batch-size ${GBS}
    --train-samples 585937500
    --manual-gc
    --manual-gc-interval 10
    --recompute-granularity full
    --recompute-method block
    --recompute-num-layers 61
    --seq-length 4096
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model deepseek-ai/DeepSeek-V3
    --data-path ${DATA_PATH}
    --split 99,1,0
    --no-create-attention-mask-in-dataloader
    --num-workers 6
    --num-layers 61
    --hidden-size 7168
    --ffn-hidden-size 18432
    --num-attention-heads 128
    --kv-channels 128
    --max-position-embeddings 4096
    --position-embedding-type rope
    --rotary-base 10000
    --make-vocab-size-divisible-by 3232
    --normalization RMSNorm
    --norm-epsilon 1e-6
    --swiglu
    --untie-embeddings-and-output-weights
    --multi-latent-attention
    --q-lora-rank 1536
    --kv-lora-rank 512
    --qk-head-dim 128
    --qk-pos-emb-head-dim 64
    --v-head-dim 128
    --qk-layernorm
    --rotary-scaling-factor 40
    --mscale 1.0
    --mscale-all-dim 1.0
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --num-experts 256
    --moe-layer-freq ([0]*3+[1]*58)
    --moe-ffn-hidden-size 2048
    --moe-shared-expert-intermediate-size 2048
    --moe-router-load-balancing-type seq_aux_loss
    --moe-aux-loss-coeff 1e-4
    --moe-router-topk 8
    --moe-router-num-groups 8
    --moe-router-group-topk 4
    --moe-router-topk-scaling-factor 2.5
    --moe-router-score-function sigmoid
    --moe-router-enable-expert-bias
    --moe-router-bias-update-rate 1e-3
    --moe-router-dtype fp32
    --moe-token-dispatcher-type alltoall
    --moe-grouped-gemm
    --moe-permute-fusion
    --mtp-num-layers 1
    --mtp-loss-scaling-factor 0.1
    --clip-grad 1.0
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --lr 2.2e-4
    --min-lr 2.2e-5
    --lr-decay-style cosine
    --lr-warmup-samples 4096000
    --lr-decay-samples 584765624
    --init-method-std 0.006
    --bf16
    --log-interval 1
    --log-throughput
    --eval-iters 32
    --eval-interval 500
    --save-interval 500
    --save ${OUTPUT_PATH}/checkpoints
    --load ${OUTPUT_PATH}/checkpoints
    --tensorboard-dir ${OUTPUT_PATH}/tensorboard
)

srun --container-image=${CONTAINER_IMAGE} --container-mounts=/lustre:/lustre \
    bash -c "cd ${MEGATRON_PATH} && python pretrain_gpt.py ${PRETRAIN_ARGS[*]}"
