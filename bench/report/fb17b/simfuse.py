import json,math,collections,sys
from sim import fnv,load,variant_terms
W=2.0/61
def basefile(set_,h):
    return {json.loads(l)['id']:json.loads(l) for l in open('pq-base-%s-%d-no-replay.jsonl'%(set_,h))}
def evaluate(set_, votefn, verbose=False):
    qs=load(set_); out={}
    for h in (0,1):
        base=basefile(set_,h)
        past=[q for q in qs if fnv(q['qid'])!=h]; scored=[q for q in qs if fnv(q['qid'])==h]
        vf=votefn(past)
        seen=set(c for q in past for c in q['relevant'])
        acc=collections.defaultdict(lambda:[0.0,0.0,0])
        for q in scored:
            b=base.get(q['qid'])
            if b is None: continue
            cls='warm' if all(r in seen for r in q['relevant']) else ('cold' if not any(r in seen for r in q['relevant']) else 'mixed')
            votes=vf(q)
            sc=collections.defaultdict(float)
            for c,s in zip(b['ranking'],b['scores']): sc[c]=s
            s0=dict(sc)
            for c,w in votes.items(): sc[c]+=W*w
            r=sorted(sc,key=lambda c:-sc[c])[:5]; r0=sorted(s0,key=lambda c:-s0[c])[:5]
            rel=q['relevant']
            a=acc[cls]; a[0]+=sum(1 for x in rel if x in r0)/len(rel); a[1]+=sum(1 for x in rel if x in r)/len(rel); a[2]+=1
        for cls,(x0,x1,n) in acc.items(): out[(h,cls)]=(x0/n,x1/n,n)
    return out
def show(name,out):
    s=name+' |'
    for h in (0,1):
        w=out.get((h,'warm')); c=out.get((h,'cold'))
        gap=(w[1]-w[0])/(1-w[0]) if w and w[0]<1 else 0
        s+=' h%d warm %.3f→%.3f (%.2f) cold %.3f→%.3f (%+.4f) |'%(h,w[0],w[1],gap,c[0],c[1],c[1]-c[0]) if c else ' h%d warm %.3f→%.3f (%.2f)|'%(h,w[0],w[1],gap)
    print(s); sys.stdout.flush()
