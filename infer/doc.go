// Package infer runs a classifier exported as ONNX on a dataset: it finds
// the model's one data input and its logits output (ModelInput,
// ModelOutput), checks a model's form before any work (CheckModelData,
// CheckSameClasses, InputNotes), runs batched inference on a copy in inference form with a
// symbolic batch (Classifier: training-mode BatchNormalization and Dropout
// switched to inference, a fixed batch made dynamic, the caller's model
// untouched), turns logits into predictions and accuracy (Argmax,
// Accuracy), and measures per-channel statistics of values inside the
// graph (ChannelStats), with which a BatchNormalization folded into its
// convolution is restored. Package eval measures models with it; it knows
// nothing of metrics or training.
package infer
