package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Open reads the dataset at path, detecting its format:
//
//   - a file ending in .npz: arrays x_train, y_train, x_test, y_test;
//   - a folder with train-images-idx3-ubyte[.gz] and friends: MNIST-family IDX;
//   - a folder with data_batch_1.bin … data_batch_5.bin and test_batch.bin:
//     CIFAR-10 binary (class names from batches.meta.txt when present);
//   - a folder with train.bin and test.bin: CIFAR-100 binary, fine labels
//     (class names from fine_label_names.txt when present);
//   - a folder with train_32x32.mat and test_32x32.mat: SVHN (MAT v5);
//   - a folder with train/ and test/ sub-folders: an image folder
//     (<split>/<class>/<image>.png|jpg|jpeg).
//
// A folder that matches nothing but holds exactly one of the archives'
// usual sub-folders (cifar-10-batches-bin, cifar-100-binary) is looked into.
func Open(path string, opts Options) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	var (
		d      *Dataset
		native int
	)
	clean := filepath.Clean(path)
	name := filepath.Base(clean)
	if !st.IsDir() {
		if !strings.EqualFold(filepath.Ext(path), ".npz") {
			return nil, fmt.Errorf("%w: %s is a file but not .npz (folders hold the other formats)", ErrUnknownFormat, path)
		}
		name = strings.TrimSuffix(name, filepath.Ext(name))
		d, native, err = openNPZ(path)
	} else {
		dir := clean
		open := detect(dir)
		if open == nil {
			for _, sub := range []string{"cifar-10-batches-bin", "cifar-100-binary"} {
				if o := detect(filepath.Join(dir, sub)); o != nil {
					dir, open = filepath.Join(dir, sub), o
					break
				}
			}
		}
		if open == nil {
			return nil, fmt.Errorf("%w: %s holds none of: train-images-idx3-ubyte[.gz] (IDX), data_batch_1.bin (CIFAR-10), "+
				"train.bin (CIFAR-100), train_32x32.mat (SVHN), train/ and test/ folders (image folder)", ErrUnknownFormat, path)
		}
		d, native, err = open(dir)
	}
	if err != nil {
		return nil, err
	}
	d.Name, d.Path = name, path
	if err := d.finish(opts, native); err != nil {
		return nil, err
	}
	return d, nil
}

type opener func(dir string) (*Dataset, int, error)

// detect returns the reader for the layout of dir, or nil.
func detect(dir string) opener {
	switch {
	case isIDXDir(dir):
		return openIDX
	case isCIFAR10Dir(dir):
		return openCIFAR10
	case isCIFAR100Dir(dir):
		return openCIFAR100
	case isSVHNDir(dir):
		return openSVHN
	case isImageFolder(dir):
		return openImageFolder
	}
	return nil
}
