import sys
from simfuse import evaluate,show
from votes import make_share
s=sys.argv[1]
for k in [3,5,10]:
    for th in [.5,.7,.9]:
        for ms in [.15,.2]:
          for boost in [1,2]:
            show('share k%d th%.1f min%.2f b%d'%(k,th,ms,boost),evaluate(s,make_share(k=k,theta=th,minsim=ms,boost=boost)))
