package server

import (
	"slices"
	"sync"
	"time"

	"github.com/capdex/capdex/registry"
)

// qualityKeep is how many of the latest searches the quality recorder keeps.
const qualityKeep = 20000

// maxQualityBuckets bounds a series' bucket count.
const maxQualityBuckets = 1000

// searchEvent is one finished search as the quality page counts it.
type searchEvent struct {
	at         time.Time
	took       time.Duration
	resolution registry.Resolution
	partial    bool
}

// qualityRecorder keeps the latest searches in a ring, in memory (the console's quality
// page; a restart empties it).
type qualityRecorder struct {
	mu   sync.Mutex
	ring []searchEvent
	next int
	full bool
}

func newQualityRecorder() *qualityRecorder {
	return &qualityRecorder{ring: make([]searchEvent, qualityKeep)}
}

// add records one finished search (resp nil: it ended without a final answer).
func (q *qualityRecorder) add(at time.Time, took time.Duration, resp *registry.SearchResponse) {
	if resp == nil {
		return
	}
	q.mu.Lock()
	q.ring[q.next] = searchEvent{at: at, took: took, resolution: resp.Resolution, partial: resp.SearchMeta.Partial}
	q.next++
	if q.next == len(q.ring) {
		q.next, q.full = 0, true
	}
	q.mu.Unlock()
}

// QualityBucket is one interval of the quality series.
type QualityBucket struct {
	Start     time.Time `json:"start"`
	Searches  int       `json:"searches"`
	Confident int       `json:"confident"`
	Ambiguous int       `json:"ambiguous"`
	NoMatch   int       `json:"no_match"`
	Partial   int       `json:"partial"`
	// P50MS and P95MS are latency quantiles of the bucket's searches (0 when none).
	P50MS float64 `json:"p50_ms"`
	P95MS float64 `json:"p95_ms"`
}

// QualitySeries is the answer of GET /v1/console/quality: searches since the daemon
// started (at most the latest qualityKeep), by interval, oldest first, and in total.
type QualitySeries struct {
	BucketSeconds float64         `json:"bucket_seconds"`
	Buckets       []QualityBucket `json:"buckets"`
	Total         QualityBucket   `json:"total"`
	PartialRate   float64         `json:"partial_rate"`
}

// series buckets the searches of the span ending at now.
func (q *qualityRecorder) series(now time.Time, bucket, span time.Duration) QualitySeries {
	q.mu.Lock()
	evs := slices.Clone(q.ring[:q.next])
	if q.full {
		evs = append(evs, q.ring[q.next:]...)
	}
	q.mu.Unlock()
	end := now.Truncate(bucket).Add(bucket)
	n := int(span / bucket)
	if n < 1 {
		n = 1
	}
	start := end.Add(-time.Duration(n) * bucket)
	out := QualitySeries{BucketSeconds: bucket.Seconds(), Buckets: make([]QualityBucket, n)}
	tooks := make([][]time.Duration, n)
	var all []time.Duration
	for i := range out.Buckets {
		out.Buckets[i].Start = start.Add(time.Duration(i) * bucket).UTC()
	}
	out.Total.Start = start.UTC()
	for _, e := range evs {
		if e.at.Before(start) || !e.at.Before(end) {
			continue
		}
		i := int(e.at.Sub(start) / bucket)
		for _, b := range []*QualityBucket{&out.Buckets[i], &out.Total} {
			b.Searches++
			switch e.resolution {
			case registry.Confident:
				b.Confident++
			case registry.Ambiguous:
				b.Ambiguous++
			default:
				b.NoMatch++
			}
			if e.partial {
				b.Partial++
			}
		}
		tooks[i] = append(tooks[i], e.took)
		all = append(all, e.took)
	}
	for i := range out.Buckets {
		out.Buckets[i].P50MS, out.Buckets[i].P95MS = quantileMS(tooks[i], 0.5), quantileMS(tooks[i], 0.95)
	}
	out.Total.P50MS, out.Total.P95MS = quantileMS(all, 0.5), quantileMS(all, 0.95)
	if out.Total.Searches > 0 {
		out.PartialRate = float64(out.Total.Partial) / float64(out.Total.Searches)
	}
	return out
}

// quantileMS is the nearest-rank quantile of ds in milliseconds (0 for none). It sorts ds.
func quantileMS(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(q*float64(len(ds))+0.999999) - 1
	i = max(0, min(i, len(ds)-1))
	return float64(ds[i].Microseconds()) / 1000
}
