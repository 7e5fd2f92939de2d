import sys
from simfuse import evaluate,show
from votes import make
s=sys.argv[1]
def oracle(w):
    def vf(past):
        seen=set(c for q in past for c in q['relevant'])
        return lambda q: {c:w for c in q['relevant'] if c in seen}
    return vf
for w in [.1,.2,.5]:
    show('oracle %.1f'%w,evaluate(s,oracle(w)))
