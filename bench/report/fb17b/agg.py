import json,math,collections,sys
from sim import fnv,load,variant_terms
def run(set_, v='base', idfmode='cap', k1=1.2, b=0.75):
    qs=load(set_)
    out=collections.defaultdict(lambda:[0,0.0,0])
    for h in (0,1):
        past=[q for q in qs if fnv(q['qid'])!=h]; scored=[q for q in qs if fnv(q['qid'])==h]
        L=[]
        for q in past:
            ts=set(variant_terms(q['terms'],v))
            for c in q['relevant']: L.append((c,q['qid'],ts))
        caps=sorted(set(c for c,_,_ in L)); C=len(caps)
        capdf=collections.Counter(); seen=set(); prof=collections.defaultdict(collections.Counter)
        for c,u,ts in L:
            for t in ts:
                prof[c][t]+=1
                if (t,c) not in seen: seen.add((t,c)); capdf[t]+=1
        idf=lambda t: math.log(1+C/(capdf.get(t,0)+1))
        norms=[sum(idf(t)**2 for t in ts) for _,_,ts in L]
        pn={c:math.sqrt(sum((idf(t)*n)**2 for t,n in p.items())) for c,p in prof.items()}
        plen={c:sum(p.values()) for c,p in prof.items()}; avgl=sum(plen.values())/len(plen)
        bidf=lambda t: math.log(1+(C-capdf.get(t,0)+.5)/(capdf.get(t,0)+.5))
        post=collections.defaultdict(list)
        for i,(c,u,ts) in enumerate(L):
            for t in ts: post[t].append(i)
        for q in scored:
            if not all(r in prof for r in q['relevant']): continue
            qt=set(variant_terms(q['terms'],v)); qn=math.sqrt(sum(idf(t)**2 for t in qt))
            dot=collections.Counter()
            for t in qt:
                for i in post.get(t,()): dot[i]+=idf(t)**2
            mx=collections.defaultdict(float); sm=collections.defaultdict(float); top3=collections.defaultdict(list)
            for i,d in dot.items():
                s=d/(qn*math.sqrt(norms[i])); c=L[i][0]
                mx[c]=max(mx[c],s); sm[c]+=s; top3[c].append(s)
            cands=set(mx)
            pc={}; bm={}
            for c in cands:
                p=prof[c]
                pc[c]=sum(idf(t)**2*p[t] for t in qt if t in p)/(qn*pn[c])
                bm[c]=sum(bidf(t)*p[t]*(k1+1)/(p[t]+k1*(1-b+b*plen[c]/avgl)) for t in qt if t in p)
            m2={c:sum(sorted(v,reverse=True)[:2]) for c,v in top3.items()}
            for name,sc in [('max',mx),('sum',sm),('top2sum',m2),('profile-cos',pc),('profile-bm25',bm)]:
                r=sorted(sc,key=lambda c:-sc[c]); g=q['relevant'][0]
                rk=r.index(g)+1 if g in r else 999
                o=out[name]; o[0]+=rk==1; o[1]+=1/rk; o[2]+=1
    for k,(a,m,n) in out.items(): print('%-14s top1 %.3f mrr %.3f n %d'%(k,a/n,m/n,n))
run(sys.argv[1], sys.argv[2] if len(sys.argv)>2 else 'base')
