import json,math,collections,sys
def fnv(s):
    h=14695981039346656037
    for b in s.encode(): h^=b; h=(h*1099511628211)&(2**64-1)
    return h&1
def load(set_):
    qs=[json.loads(l) for l in open('terms-%s.jsonl'%set_)]
    for q in qs: add_tri(q)
    return qs
def is_cjk(t): return any('\u4e00'<=c<='\u9fff' for c in t)
_q={}
def variant_terms(terms, v, q=None):
    if v=='bigram':  # drop CJK unigrams
        return [t for t in terms if not (is_cjk(t) and len(t)==1)]
    if v=='noconcept':
        return [t for t in terms if not t.startswith('~')]
    if v=='nouni_tri' or v=='tri':
        out=[t for t in terms if not (v=='nouni_tri' and is_cjk(t) and len(t)==1)]
        return out+_tri.get(id(terms),[])
    return terms
_tri={}
import re as _re
def add_tri(q):
    runs=_re.findall('[\u4e00-\u9fff]+',q['query'])
    _tri[id(q['terms'])]=[r[i:i+3] for r in runs for i in range(len(r)-2)]
def run(set_, v='base', agg='lead', lead=.3, sup=.15, cap=.5, idfmode='cap'):
    qs=load(set_)
    res=[]
    for h in (0,1):
        past=[q for q in qs if fnv(q['qid'])!=h]
        scored=[q for q in qs if fnv(q['qid'])==h]
        L=[]  # (cap, user, termset)
        for q in past:
            ts=set(variant_terms(q['terms'],v))
            for c in q['relevant']: L.append((c,q['qid'],ts))
        caps=set(c for c,_,_ in L)
        C=len(caps)
        capdf=collections.Counter(); sdf=collections.Counter()
        seen=set()
        for c,u,ts in L:
            for t in ts:
                if (t,c) not in seen: seen.add((t,c)); capdf[t]+=1
                sdf[t]+=1
        N=len(L)
        def idf(t):
            if idfmode=='cap': return math.log(1+C/(capdf.get(t,0)+1))
            return math.log(1+N/(sdf.get(t,0)+1))
        norms=[sum(idf(t)**2 for t in ts) for _,_,ts in L]
        post=collections.defaultdict(list)
        for i,(c,u,ts) in enumerate(L):
            for t in ts: post[t].append(i)
        for q in scored:
            qt=set(variant_terms(q['terms'],v))
            qn=sum(idf(t)**2 for t in qt)
            dot=collections.Counter()
            for t in qt:
                w=idf(t)**2
                for i in post.get(t,()): dot[i]+=w
            percap=collections.defaultdict(lambda: collections.defaultdict(float)); led=set(); best=collections.defaultdict(float)
            for i,d in dot.items():
                s=d/math.sqrt(qn*norms[i]); c,u,_=L[i]
                best[c]=max(best[c],s)
                if s>=sup: percap[c][u]+=s
                if s>=lead: led.add(c)
            votes={}
            for c,us in percap.items():
                if agg=='lead' and c not in led: continue
                m=1
                for u,w in us.items(): m*=1-min(w,cap)
                votes[c]=1-m
            cls='warm' if all(r in caps for r in q['relevant']) else ('cold' if not any(r in caps for r in q['relevant']) else 'mixed')
            res.append((h,q['qid'],cls,q['relevant'],votes,best))
    return res
def summary(res,name):
    # warm: gold top vote & weight; cold: max vote
    wt=ws=0; nw=0; cw=[]; cn=0
    good=[];bad=[]
    for h,qid,cls,rel,votes,best in res:
        for c,w in votes.items():
            (good if c in rel else bad).append(w)
        if cls=='warm':
            nw+=1
            if votes:
                top=max(votes,key=votes.get)
                if top in rel: wt+=1
        if cls=='cold':
            cn+=1; cw.append(max(votes.values()) if votes else 0)
    cw.sort()
    print('%-30s warm %d top1gold %d | good votes %d sum %.1f | bad votes %d sum %.1f | cold n %d voted %d maxw90 %.2f'%(name,nw,wt,len(good),sum(good),len(bad),sum(bad),cn,sum(1 for x in cw if x>0),cw[int(.9*len(cw))] if cw else 0))
if __name__=='__main__':
    s=sys.argv[1]
    for v in ['base','bigram']:
        for idfm in ['cap','search']:
            for lead,sup in [(.3,.15),(.2,.1),(.25,.15)]:
                summary(run(s,v,lead=lead,sup=sup,idfmode=idfm),'%s %s %.2f/%.2f'%(v,idfm,lead,sup))
