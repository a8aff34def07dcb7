//go:build !race

package figure

const raceEnabled = false
