// Command unlearn removes the influence of chosen training examples from a
// classifier exported as ONNX. See README.md and `unlearn help`.
package main
