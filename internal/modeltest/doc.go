// Package modeltest runs, in its tests only, the graph analysis on real PyTorch exports.
// It lives apart from package graph because it needs onnxio to load models.
package modeltest
