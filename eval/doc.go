// Package eval measures models: accuracy on the train, test, forget and retain
// splits, and (in later work) membership-inference scores and oracle deltas.
// It runs forward passes only and never trains.
//
// Conventions: every rate is a fraction in [0, 1]; logits are row-major
// [examples, classes] float32; examples are addressed by their index in the
// split (ids in the training split for forget/retain).
package eval
