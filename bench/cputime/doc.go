// Package cputime reads the CPU time of the running process, for benchmarks that report
// CPU per operation next to wall time: a search spreads over the actor goroutines, and a
// loaded machine stretches wall time but not the work done.
package cputime
