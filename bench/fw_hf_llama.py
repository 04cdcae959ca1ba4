#!/usr/bin/env python3
"""Hugging Face transformers greedy decoding, a Llama model, dynamic or static KV cache (row F15).

Models a user's generate() call on a modern decoder: LlamaForCausalLM built from a LlamaConfig
with random weights (nothing is downloaded: HF_HUB_OFFLINE=1): RMSNorm, rotary embeddings,
grouped-query attention through SDPA, SwiGLU MLP; fp16, batch 1, a fixed 16-token prompt (4 of
them, cycled), model.generate(..., do_sample=False, max_new_tokens=N, min_new_tokens=N).

--cache=dynamic is the default cache (its tensors grow every token, as in F4); --cache=static
preallocates the cache (cache_implementation="static"), so every decode step has the same
shapes. --compile=off keeps generate from compiling the forward (transformers compiles it for a
static cache where it can, with PyTorch's own CUDA graphs: an application that graphs itself,
which libautograph must leave alone); --compile=auto lets it. One iteration is one generate()
call; the checksum is that of the generated ids. --sample draws the tokens instead (top-k 50,
top-p 0.9, temperature 0.8; the generator seeded before each call, so a call's tokens do not
depend on what ran before it): PyTorch's random kernels take the generator's offset as an
argument that changes every step.

  python3 bench/fw_hf_llama.py --cache=static                                  # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_hf_llama.py --cache=static # with libautograph
"""

import time

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=16, warmup=3, count=True)
    ap.add_argument("--cache", choices=["dynamic", "static"], default="dynamic")
    ap.add_argument("--compile", choices=["off", "auto"], default="off")
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=16, help="prompt length in tokens")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--sample", action="store_true", help="sample instead of greedy decoding")
    ap.add_argument("--per-call", action="store_true",
                    help="also print every generate call's wall time (warm-up calls included)")
    a = ap.parse_args()
    torch, LlamaConfig, LlamaForCausalLM = fw.transformers_or_skip("LlamaConfig",
                                                                   "LlamaForCausalLM")

    torch.manual_seed(1234)
    eos = a.vocab - 1  # inside the vocabulary; min_new_tokens keeps it from ending a run early
    cfg = LlamaConfig(vocab_size=a.vocab, hidden_size=a.hidden, intermediate_size=688,
                      num_hidden_layers=a.layers, num_attention_heads=a.heads,
                      num_key_value_heads=a.kv_heads, max_position_embeddings=256,
                      bos_token_id=0, eos_token_id=eos, pad_token_id=eos)
    model = LlamaForCausalLM(cfg).to("cuda", torch.float16).eval()
    prompts = torch.randint(0, eos, (4, 1, a.prompt), device="cuda")
    mask = torch.ones(1, a.prompt, dtype=torch.long, device="cuda")
    kw = dict(do_sample=False, max_new_tokens=a.new_tokens, min_new_tokens=a.new_tokens)
    if a.sample:
        kw.update(do_sample=True, top_k=50, top_p=0.9, temperature=0.8)
    if a.cache == "static":
        kw["cache_implementation"] = "static"
    if a.compile == "off":
        kw["disable_compile"] = True  # (older transformers do not compile, nor know the word)
    generated = []

    def generate(i):
        try:
            return model.generate(input_ids=prompts[i % 4], attention_mask=mask, **kw)
        except (TypeError, ValueError) as e:
            if "disable_compile" not in str(e) or "disable_compile" not in kw:
                raise
            del kw["disable_compile"]
            return model.generate(input_ids=prompts[i % 4], attention_mask=mask, **kw)

    per_call = []

    def step(i):
        if a.sample:
            torch.manual_seed(1000 + i)
        t0 = time.perf_counter()
        out = generate(i)
        generated.append(out[0, a.prompt:])
        if a.per_call:
            torch.cuda.synchronize()
            per_call.append((time.perf_counter() - t0) * 1e3)

    try:
        step(0)  # (the first call finds out what this transformers takes; counted as warm-up)
    except (TypeError, ValueError) as e:
        fw.skip("this transformers cannot generate so: %s" % e)
    wall, gpu_us = fw.torch_timed(torch, step, max(a.warmup - 1, 0), a.iters)
    generated = generated[-a.iters:]
    if a.per_call:
        print("ms per call: %s" % " ".join("%.2f" % t for t in per_call))
    return fw.generate_report(torch, a, generated, wall, gpu_us, step)


if __name__ == "__main__":
    raise SystemExit(main())
