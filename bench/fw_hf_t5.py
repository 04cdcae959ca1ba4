#!/usr/bin/env python3
"""Hugging Face transformers encoder-decoder generation, T5, greedy (framework row F24).

Models a user's summarisation or translation call: T5ForConditionalGeneration built from a
T5Config with random weights (nothing downloaded), fp32 (T5 is usually run in fp32 or bf16:
its fp16 activations overflow), batch 1, a 48-token source (4 of them, cycled), and
model.generate(..., do_sample=False, max_new_tokens=N, min_new_tokens=N). Each call runs the
encoder once, then N decoder steps, each with self-attention over a cache that grows by one
token and cross-attention over the encoder's keys and values (computed at the first step, then
reused: transformers' EncoderDecoderCache), relative position biases computed every step. One
iteration is one generate() call; the checksum is that of every call's generated ids. No graph
mode.

  python3 bench/fw_hf_t5.py                                        # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_hf_t5.py       # with libautograph
"""

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=16, warmup=3, count=True)
    ap.add_argument("--new-tokens", type=int, default=24)
    ap.add_argument("--source", type=int, default=48, help="source length in tokens")
    ap.add_argument("--layers", type=int, default=4, help="encoder and decoder layers each")
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=8192)
    a = ap.parse_args()
    torch, T5Config, T5ForConditionalGeneration = fw.transformers_or_skip(
        "T5Config", "T5ForConditionalGeneration")

    torch.manual_seed(1234)
    eos = 1
    cfg = T5Config(vocab_size=a.vocab, d_model=a.d_model, d_kv=a.d_model // a.heads,
                   d_ff=4 * a.d_model, num_layers=a.layers, num_decoder_layers=a.layers,
                   num_heads=a.heads, decoder_start_token_id=0, pad_token_id=0,
                   eos_token_id=eos, feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    model = T5ForConditionalGeneration(cfg).to("cuda").eval()
    sources = torch.randint(2, a.vocab, (4, 1, a.source), device="cuda")
    mask = torch.ones(1, a.source, dtype=torch.long, device="cuda")
    generated = []

    def step(i):
        with torch.no_grad():
            out = model.generate(input_ids=sources[i % 4], attention_mask=mask, do_sample=False,
                                 max_new_tokens=a.new_tokens, min_new_tokens=a.new_tokens)
        generated.append(out[0, 1:])  # (after the decoder's start token)

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    return fw.generate_report(torch, a, generated, wall, gpu_us, step)


if __name__ == "__main__":
    raise SystemExit(main())
