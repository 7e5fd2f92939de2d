//go:build race

package store

// raceOn is true in a -race build: heavy tests shrink their data.
const raceOn = true
