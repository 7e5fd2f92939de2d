import json,sys,hashlib
set_=sys.argv[1]; diag=sys.argv[2]; tag=sys.argv[3] if len(sys.argv)>3 else 'base'
def fnv(s):
    h=14695981039346656037
    for b in s.encode(): h^=b; h=(h*1099511628211)&(2**64-1)
    return h&1
qs=[json.loads(l) for l in open('/work/shared/eval/%s/queries.jsonl'%set_)]
D={}
for l in open(diag):
    d=json.loads(l); D[d['qid']]=d
import collections
cls=collections.Counter()
for h in (0,1):
    seen=set()
    for q in qs:
        if fnv(q['qid'])!=h: seen.update(q['relevant'])
    base={}; rep={}
    for l in open('pq-base-%s-%d-no-replay.jsonl'%(set_,h)):
        d=json.loads(l); base[d['id']]=d
    for l in open('pq-%s-%s-%d-replay.jsonl'%(tag,set_,h)):
        d=json.loads(l); rep[d['id']]=d
    for qid,b in base.items():
        rel=b['relevant']
        if not all(r in seen for r in rel): continue
        r=rep[qid]
        def rk(x):
            for i,c in enumerate(x['ranking']):
                if c in rel: return i+1
            return 99
        rb, rr = rk(b), rk(r)
        if rr<=5: 
            cls['hit' if rb<=5 else 'rescued']+=1
            continue
        d=D.get(qid,{})
        if d.get('goldVoteRank')==1: c='voted-top1-but-fused-weakly'
        elif d.get('goldVote',0)>0: c='voted-but-outvoted(rank%d)'%min(d['goldVoteRank'],3)
        elif d.get('goldBestSim',0)>=0.3: c='sim>=lead-but-no-vote?'
        elif d.get('goldBestSim',0)==0: c='no-shared-term'
        else: c='sim<lead(%.1f)'%(int(d['goldBestSim']*10)/10)
        if b and rb<=5: c='LOST:'+c
        cls[c]+=1
        if len(sys.argv)>4: print(h,qid,rb,rr,c,d.get('goldBestSim'),d.get('goldSimRank'),d.get('goldVote'),d.get('topW'),b['query'])
for k,v in sorted(cls.items()): print(k,v)
