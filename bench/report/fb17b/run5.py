import sys
from simfuse import evaluate,show
from votes import make_clause
s=sys.argv[1]
for lead,sup in [(.3,.15),(.4,.2),(.5,.3)]:
    show('clause %.2f/%.2f'%(lead,sup),evaluate(s,make_clause(lead=lead,sup=sup)))
