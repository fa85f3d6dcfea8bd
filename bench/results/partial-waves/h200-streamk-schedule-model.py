"""The stream-K schedule of src/kernels/14_tma_ws_streamk.cu since ac071cb (tws_schedule<TWS_STREAM_K>::next and tws_sk_start)
and the fixup kernel's slot rule (pg_tma_ws_fixup_kernel), modelled in Python over random plans as the
planner (configure_stream) makes them: every K step of every tile taken once, whole tiles to C, and
each cut tile's slots, as the fixup finds them, holding that tile's parts. python3 THIS_FILE -> "ok N"."""
import random
def sk_start(b, I, B): return b*(I//B) + (b*(I%B))//B
def run(tiles, k_tiles, B, sk_first):
    I=(tiles-sk_first)*k_tiles
    cov={}  # (tile,k)-> count
    slots={} # (b,slot)->(tile,first,last)
    toc=set()
    for b in range(B):
        nxt, end = b, sk_first
        skn, ske = sk_start(b,I,B), sk_start(b+1,I,B)
        while True:
            if nxt < end:
                tile, first, last, slot = nxt, 0, k_tiles, 0; nxt += B
            else:
                it = skn
                if it >= ske: break
                slot = 0 if it == sk_start(b,I,B) else 1
                pt = it//k_tiles; ts = pt*k_tiles
                tile = sk_first+pt; first = it-ts; last = min(ske-ts, k_tiles); skn = ts+last
            for k in range(first,last): cov[(tile,k)] = cov.get((tile,k),0)+1
            if first==0 and last==k_tiles: toc.add(tile)
            else:
                assert (b,slot) not in slots, ('slot reused',b,slot)
                slots[(b,slot)] = (tile,first,last)
    assert all(cov.get((t,k),0)==1 for t in range(tiles) for k in range(k_tiles)), 'coverage'
    # fixup rule: for each cut tile t (stream part), blocks from first_block..last with slot per rule
    for t in range(sk_first, tiles):
        if t in toc: continue
        begin=(t-sk_first)*k_tiles
        def block_of(it):
            b=it*B//I
            while b+1<B and sk_start(b+1,I,B)<=it: b+=1
            while b>0 and sk_start(b,I,B)>it: b-=1
            return b
        fb=block_of(begin); lb=block_of(begin+k_tiles-1)
        got=0
        for bb in range(fb,lb+1):
            s=0 if sk_start(bb,I,B)>=begin else 1
            tile,first,last=slots[(bb,s)]
            assert tile==t, ('fixup slot holds another tile',t,bb,s,tile)
            got+=last-first
        assert got==k_tiles, ('fixup sums',t,got)
    return True
random.seed(1)
n=0
for _ in range(3000):
    B=random.choice([132,264,7,1,2,13,1024])
    tiles=random.randint(1,3000); k_tiles=random.randint(1,200)
    whole=tiles//B; first=whole*B
    if (tiles-first)*k_tiles < B and whole>=1: first-=B
    if tiles % B == 0: continue
    I=(tiles-first)*k_tiles
    Bb=min(B,I)
    run(tiles,k_tiles,Bb,first); n+=1
print('ok',n)
