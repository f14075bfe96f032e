// Package safetensors reads and writes the safetensors format
// (https://github.com/huggingface/safetensors, "Format"): an 8-byte
// little-endian header length N, N bytes of JSON mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data section) plus an optional "__metadata__" map of strings, then the
// little-endian tensor data.
package safetensors
