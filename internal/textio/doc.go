// Package textio holds the small writer helpers the text renderers share
// (eval/report, inspect, the experiment runner's step logs): ErrWriter,
// which keeps the first write error so that a renderer can write line by
// line and report once.
package textio
