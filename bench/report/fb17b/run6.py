import sys
from simfuse import evaluate,show
from votes import make_share, make
s=sys.argv[1]
show('current 0.30/0.15',evaluate(s,make()))
show('share k3 th0.5 min0.20',evaluate(s,make_share(k=3,theta=.5,minsim=.2)))
show('share k5 th0.5 min0.20',evaluate(s,make_share(k=5,theta=.5,minsim=.2)))
