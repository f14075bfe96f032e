// Package data reads labelled image datasets, forget-set ids files, and
// serves mini-batches. It knows nothing about models.
//
// # Layout and scaling
//
// Images are channel-first. A Split stores N examples of shape C×H×W, as
// uint8 when the source is 8-bit and as float32 otherwise. Split.Batch writes
// float32 N×C×H×W: 8-bit pixels divided by 255 (so in [0,1]), float pixels
// as stored (npz float arrays are assumed already scaled; 16-bit PNGs are
// divided by 65535), then per channel (x - Mean[c]) / Std[c] when the
// Dataset has Mean/Std. Labels are int32 in [0, Classes).
//
// # Ids and order
//
// An id is a 0-based index into the training split in the order the source
// holds it, the order Split.ID reports even for subsets:
//
//   - IDX (MNIST, Fashion-MNIST): record order of train-images-idx3-ubyte;
//   - CIFAR-10: data_batch_1.bin records, then data_batch_2.bin, … 5;
//   - CIFAR-100: train.bin record order; the fine label is used;
//   - SVHN: column order of X in train_32x32.mat; label 10 becomes 0;
//   - image folders: torchvision ImageFolder order: classes by sorted folder
//     name, within a class by folder path then file name;
//   - npz: first axis of x_train.
//
// # ids files
//
// One id per line; '#' comments and blank lines allowed. ParseIDs keeps file
// order; ForgetRetain gives the sorted forget ids and their sorted
// complement (the retain set). ParseForget also reads a list of file names
// for image folders, whose splits remember each example's file
// (Split.File): the first line that is not blank or a comment decides the
// form. List gives a split's ids with their labels, class names and files.
//
// # Errors
//
// Errors name the file (and line) and what is wrong; callers see errors,
// never panics, for any input data. Readers bound their allocations by the
// data actually present, whatever a header claims.
//
// # Other conventions
//
// Destinations come first and are named dst. Batches returns consecutive
// batches; the last may be smaller.
package data
