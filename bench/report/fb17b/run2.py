import sys
from simfuse import evaluate,show
from votes import make
s=sys.argv[1]
for lead,sup in [(.25,.15),(.2,.1)]:
    show('knn %.2f/%.2f'%(lead,sup),evaluate(s,make(lead=lead,sup=sup)))
for lead in [.15,.2,.25,.3]:
    for mg in [None,1.2,1.5]:
        show('profile lead %.2f margin %s'%(lead,mg),evaluate(s,make(mode='profile',lead=lead,margin=mg)))
