#!/usr/bin/env python3
"""Hugging Face transformers BERT encoder inference (framework row F14): a batch of sentences.

Models a user embedding text with a BERT-style encoder: BertModel built from a BertConfig with
random weights (nothing is downloaded), 6 layers, hidden 384, fp16, eval and inference_mode;
each iteration encodes a batch of 8 sequences of 64 tokens with an attention mask (padding in
some), mean-pools the last hidden state over the mask, and copies the embeddings to the host
(.cpu(), a sync), as a retrieval service does per request. --mode=graph: PyTorch's own CUDA
graph of the same forward.

  python3 bench/fw_hf_bert.py                                            # eager
  LD_PRELOAD=build/libautograph.so python3 bench/fw_hf_bert.py           # with libautograph
"""

import fw_common as fw


def main():
    ap = fw.parser(__doc__, iters=200, warmup=20, graph=True, count=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--layers", type=int, default=6)
    a = ap.parse_args()
    torch, BertConfig, BertModel = fw.transformers_or_skip("BertConfig", "BertModel")

    torch.manual_seed(1234)
    cfg = BertConfig(vocab_size=8192, hidden_size=384, num_hidden_layers=a.layers,
                     num_attention_heads=6, intermediate_size=1536, max_position_embeddings=128)
    model = BertModel(cfg, add_pooling_layer=False).to("cuda", torch.float16).eval()
    ids = torch.randint(1, 8192, (4, a.batch, a.seq), device="cuda")
    lengths = torch.randint(a.seq // 2, a.seq + 1, (4, a.batch), device="cuda")
    masks = (torch.arange(a.seq, device="cuda")[None, None, :] < lengths[:, :, None]).long()
    out_host = []

    def encode(x, m):
        h = model(input_ids=x, attention_mask=m).last_hidden_state
        w = m[:, :, None].to(h.dtype)
        return (h * w).sum(1) / w.sum(1)

    graph = None
    with torch.inference_mode():
        if a.mode == "graph":
            sx, sm = ids[0].clone(), masks[0].clone()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    encode(sx, sm)
            torch.cuda.current_stream().wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                sout = encode(sx, sm)

        def step(i):
            x, m = ids[i % 4], masks[i % 4]
            if graph is not None:
                sx.copy_(x)
                sm.copy_(m)
                graph.replay()
                e = sout
            else:
                e = encode(x, m)
            out_host.append(e.float().cpu())

        wall, gpu_us = fw.torch_timed(torch, step, a.warmup, a.iters)
        ok = all(bool(torch.isfinite(e).all()) for e in out_host[-4:])
        digest = fw.floats_digest([], b"".join(e.numpy().tobytes() for e in out_host[-8:]))
        counted = fw.torch_count_launches(torch, step, 0, 10) if (a.count_launches and graph is None) else None
    return fw.report(digest, wall, a.iters, gpu_us, ok, counted)


if __name__ == "__main__":
    raise SystemExit(main())
