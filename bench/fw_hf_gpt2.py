#!/usr/bin/env python3
"""Hugging Face transformers greedy decoding, GPT-2, dynamic KV cache (framework row F4; issue 13).

Models a user's generate() call: GPT2LMHeadModel built from a GPT2Config with random weights
(nothing is downloaded: no from_pretrained, and HF_HUB_OFFLINE=1), fp16, batch 1, a fixed
16-token prompt (4 of them, cycled), model.generate(..., do_sample=False,
max_new_tokens=N, min_new_tokens=N) with the default dynamic cache. One iteration is one
generate() call; "us per generated token" is the time per iteration over N. The checksum is
that of the generated ids. No graph mode.

  python3 bench/fw_hf_gpt2.py                                            # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_hf_gpt2.py           # with libautograph
"""

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=20, warmup=3, count=True)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=16, help="prompt length in tokens")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--embd", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=8192)
    a = ap.parse_args()
    torch, GPT2Config, GPT2LMHeadModel = fw.transformers_or_skip("GPT2Config", "GPT2LMHeadModel")

    torch.manual_seed(1234)
    eos = a.vocab - 1  # inside the vocabulary; min_new_tokens keeps it from ending a run early
    cfg = GPT2Config(vocab_size=a.vocab, n_embd=a.embd, n_layer=a.layers, n_head=a.heads,
                     bos_token_id=0, eos_token_id=eos, pad_token_id=eos)
    model = GPT2LMHeadModel(cfg).to("cuda", torch.float16).eval()
    prompts = torch.randint(0, eos, (4, 1, a.prompt), device="cuda")
    mask = torch.ones(1, a.prompt, dtype=torch.long, device="cuda")
    generated = []

    def step(i):
        out = model.generate(input_ids=prompts[i % 4], attention_mask=mask, do_sample=False,
                             max_new_tokens=a.new_tokens, min_new_tokens=a.new_tokens)
        generated.append(out[0, a.prompt:])

    wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
    return fw.generate_report(torch, a, generated, wall, gpu_us, step)


if __name__ == "__main__":
    raise SystemExit(main())
