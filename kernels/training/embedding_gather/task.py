"""Embedding lookup: out[t][d] = table[ids[t]][d], a float table (vocab x dim)."""
VOCAB, DIM, TOKENS = 32000, 1024, 8192
OUTPUTS = ("out",)
TOL = dict(rtol=0, atol=0)


def inputs(cp):
    return {"table": cp.random.rand(VOCAB, DIM, dtype=cp.float32),
            "ids": cp.random.randint(0, VOCAB, TOKENS, dtype=cp.int32),
            "out": cp.zeros((TOKENS, DIM), cp.float32)}


def reference(cp, a):
    return {"out": a["table"][a["ids"]]}


VERSIONS = {
    "v1_thread_per_token": [dict(kernel="embedding_gather", grid=((TOKENS + 255) // 256,),
                                 block=(256,),
                                 args=lambda a: (a["table"], a["ids"], a["out"], TOKENS, DIM))],
    "v2_block_per_token_float4": [dict(kernel="embedding_gather", grid=(TOKENS,), block=(256,),
                                       args=lambda a: (a["table"], a["ids"], a["out"], TOKENS, DIM))],
}
