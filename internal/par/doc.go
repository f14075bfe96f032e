// Package par splits a loop over [0, n) between goroutines.
package par
