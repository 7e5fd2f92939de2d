package bench

import "time"

// QualityDeadlines gives every retriever 30 s. Quality figures (the golden files, the
// calibration fit, the feedback replays) must not depend on how loaded the machine is: a
// retriever that misses its production deadline makes the answer partial, which changes
// the ranking and the confidence features.
func QualityDeadlines() map[string]time.Duration {
	dl := map[string]time.Duration{}
	for _, r := range Retrievers {
		dl[r] = 30 * time.Second
	}
	return dl
}
