"""Training the biLM (Peters et al. 2018 §3.1, §3.4; Józefowicz et al. 2016): the word-stream data
and vocabulary (``lm_data``), the joint forward/backward language model and its held-out perplexity
(``lm_training``), the fused CPU training step (``lm_fast_step``, ``fused_lstm``, ``softmax_head``)
and resumable checkpoints (``lm_checkpoint``). The command is ``python -m elmo_core.pretrain`` (its
arguments and size presets: ``lm_command_line``); the biLM these produce is read by the inference
side (``elmo_core.bilm``, ``elmo_core.original_format``)."""
