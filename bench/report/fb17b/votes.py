import math,collections
from sim import variant_terms
def make(v='base',lead=.3,sup=.15,cap=.5,mode='knn',margin=None,minsim=.15,k1=1.2,b=.75,scale=1.0):
    def votefn(past):
        L=[]
        for q in past:
            ts=set(variant_terms(q['terms'],v))
            for c in q['relevant']: L.append((c,q['qid'],ts))
        caps=set(c for c,_,_ in L); C=len(caps)
        capdf=collections.Counter(); seen=set(); prof=collections.defaultdict(collections.Counter)
        for c,u,ts in L:
            for t in ts:
                prof[c][t]+=1
                if (t,c) not in seen: seen.add((t,c)); capdf[t]+=1
        idf=lambda t: math.log(1+C/(capdf.get(t,0)+1))
        norms=[sum(idf(t)**2 for t in ts) for _,_,ts in L]
        pn={c:math.sqrt(sum((idf(t)*n)**2 for t,n in p.items())) for c,p in prof.items()}
        post=collections.defaultdict(list)
        for i,(c,u,ts) in enumerate(L):
            for t in ts: post[t].append(i)
        def f(q):
            qt=set(variant_terms(q['terms'],v)); qn=sum(idf(t)**2 for t in qt)
            if qn==0: return {}
            dot=collections.Counter()
            for t in qt:
                for i in post.get(t,()): dot[i]+=idf(t)**2
            percap=collections.defaultdict(lambda: collections.defaultdict(float)); best=collections.defaultdict(float)
            for i,d in dot.items():
                s=d/math.sqrt(qn*norms[i]); c,u,_=L[i]
                best[c]=max(best[c],s)
                if s>=sup: percap[c][u]+=s
            if mode=='knn':
                votes={}
                for c,us in percap.items():
                    if best[c]<lead: continue
                    m=1
                    for u,w in us.items(): m*=1-min(w,cap)
                    votes[c]=1-m
                return votes
            if mode=='profile':
                pc={}
                for c in best:
                    p=prof[c]
                    pc[c]=sum(idf(t)**2*p[t] for t in qt if t in p)/(math.sqrt(qn)*pn[c])
                votes={}
                srt=sorted(pc.values(),reverse=True)
                second=srt[1] if len(srt)>1 else 0
                for c,s in pc.items():
                    if s<lead: continue
                    if margin is not None and s < margin*second and s!=srt[0]: continue
                    votes[c]=min(cap, s*scale)
                return votes
        return f
    return votefn

def make_share(k=5, lead=.3, minsim=.15, theta=.5, cap=.5, boost=1.0, v='base'):
    """kNN share: among the k most similar past searches (sim>=minsim), a capability's share
    of their similarity; voted when it has share>=theta and best>=minsim; lead (>=lead) votes as now."""
    base=make(v=v,lead=lead,sup=.15,cap=cap)
    def votefn(past):
        L=[]
        for q in past:
            ts=set(variant_terms(q['terms'],v))
            for c in q['relevant']: L.append((c,q['qid'],ts))
        caps=set(c for c,_,_ in L); C=len(caps)
        capdf=collections.Counter(); seen=set()
        for c,u,ts in L:
            for t in ts:
                if (t,c) not in seen: seen.add((t,c)); capdf[t]+=1
        idf=lambda t: math.log(1+C/(capdf.get(t,0)+1))
        norms=[sum(idf(t)**2 for t in ts) for _,_,ts in L]
        post=collections.defaultdict(list)
        for i,(c,u,ts) in enumerate(L):
            for t in ts: post[t].append(i)
        bf=base(past)
        def f(q):
            votes=bf(q)
            qt=set(variant_terms(q['terms'],v)); qn=sum(idf(t)**2 for t in qt)
            if qn==0: return votes
            dot=collections.Counter()
            for t in qt:
                for i in post.get(t,()): dot[i]+=idf(t)**2
            sims=sorted(((d/math.sqrt(qn*norms[i]),i) for i,d in dot.items()),reverse=True)[:k]
            sims=[(s,i) for s,i in sims if s>=minsim]
            tot=sum(s for s,_ in sims)
            if not tot: return votes
            share=collections.defaultdict(float); users=collections.defaultdict(set); best=collections.defaultdict(float)
            for s,i in sims:
                c=L[i][0]; share[c]+=s/tot; users[c].add(L[i][1]); best[c]=max(best[c],s)
            for c,sh in share.items():
                if sh>=theta and c not in votes:
                    votes[c]=min(cap, boost*best[c]*sh)
            return votes
        return f
    return votefn

def make_clause(lead=.3, sup=.15, cap=.5, whole=True):
    """clause-level: every past clause is a learned search of its session's capabilities; every
    clause of the new query asks for votes; a capability's vote is its best over the query's clauses."""
    def votefn(past):
        L=[]
        for q in past:
            for cl in (q['clauses'] or [q['terms']]):
                ts=set(cl)
                for c in q['relevant']: L.append((c,q['qid'],ts))
        caps=set(c for c,_,_ in L); C=len(caps)
        capdf=collections.Counter(); seen=set()
        for c,u,ts in L:
            for t in ts:
                if (t,c) not in seen: seen.add((t,c)); capdf[t]+=1
        idf=lambda t: math.log(1+C/(capdf.get(t,0)+1))
        norms=[sum(idf(t)**2 for t in ts) for _,_,ts in L]
        post=collections.defaultdict(list)
        for i,(c,u,ts) in enumerate(L):
            for t in ts: post[t].append(i)
        wf=make(lead=lead,sup=sup,cap=cap)(past) if whole else None
        def one(qt):
            qn=sum(idf(t)**2 for t in qt)
            if qn==0: return {}
            dot=collections.Counter()
            for t in qt:
                for i in post.get(t,()): dot[i]+=idf(t)**2
            percap=collections.defaultdict(lambda: collections.defaultdict(float)); best=collections.defaultdict(float)
            for i,d in dot.items():
                s=d/math.sqrt(qn*norms[i]); c,u,_=L[i]
                best[c]=max(best[c],s)
                if s>=sup: percap[c][u]=max(percap[c][u],s)
            votes={}
            for c,us in percap.items():
                if best[c]<lead: continue
                m=1
                for u,w in us.items(): m*=1-min(w,cap)
                votes[c]=1-m
            return votes
        def f(q):
            votes=wf(q) if wf else {}
            cls=q['clauses'] or [q['terms']]
            if len(cls)<2: return votes
            for cl in cls:
                for c,w in one(set(cl)).items(): votes[c]=max(votes.get(c,0),w)
            return votes
        return f
    return votefn
