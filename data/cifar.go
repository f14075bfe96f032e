package data

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/unlearn-tool/unlearn/internal/fsread"
)

// CIFAR binary layout: each record is the label byte(s) followed by
// 3×32×32 pixels, channel-first (1024 red, 1024 green, 1024 blue), rows top
// to bottom.
const cifarPixels = 3 * 32 * 32

var cifar10Train = []string{
	"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin",
}

// readCIFARFiles concatenates the records of files. labelBytes is 1
// (CIFAR-10) or 2 (CIFAR-100: coarse, fine; the fine label is used).
func readCIFARFiles(files []string, labelBytes, classes int) (*Split, error) {
	rec := labelBytes + cifarPixels
	var pix []uint8
	var labels []int32
	for _, path := range files {
		buf, err := fsread.File(path, "data file", 1<<31)
		if err != nil {
			return nil, err
		}
		if len(buf) == 0 {
			return nil, fileErr(path, "empty file")
		}
		if r := len(buf) % rec; r != 0 {
			return nil, fileErr(path, "truncated record %d: expected %d bytes, got %d", len(buf)/rec, rec, r)
		}
		n := len(buf) / rec
		if pix == nil {
			pix = make([]uint8, 0, n*cifarPixels*len(files))
			labels = make([]int32, 0, n*len(files))
		}
		for i := range n {
			r := buf[i*rec : (i+1)*rec]
			l := int(r[labelBytes-1])
			if l >= classes {
				return nil, fileErr(path, "record %d: label %d out of range [0, %d)", i, l, classes)
			}
			labels = append(labels, int32(l))
			pix = append(pix, r[labelBytes:]...)
		}
	}
	s, err := NewSplitU8(3, 32, 32, pix, labels)
	if err != nil {
		return nil, err
	}
	if len(files) == 1 {
		s.src = files[0]
	}
	return s, nil
}

// readNames reads class names, one per non-blank line.
func readNames(path string, want int) ([]string, error) {
	f, err := fsread.Open(path, "data file")
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			names = append(names, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, wrapFile(path, err)
	}
	if len(names) != want {
		return nil, fileErr(path, "%d class names, want %d", len(names), want)
	}
	return names, nil
}

func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func isCIFAR10Dir(dir string) bool { return exists(filepath.Join(dir, cifar10Train[0])) }

func isCIFAR100Dir(dir string) bool {
	return exists(filepath.Join(dir, "train.bin")) && !exists(filepath.Join(dir, cifar10Train[0]))
}

func openCIFAR10(dir string) (*Dataset, int, error) {
	var files []string
	for _, name := range cifar10Train {
		files = append(files, filepath.Join(dir, name))
	}
	train, err := readCIFARFiles(files, 1, 10)
	if err != nil {
		return nil, 0, err
	}
	test, err := readCIFARFiles([]string{filepath.Join(dir, "test_batch.bin")}, 1, 10)
	if err != nil {
		return nil, 0, err
	}
	names, err := readNames(filepath.Join(dir, "batches.meta.txt"), 10)
	if err != nil {
		return nil, 0, err
	}
	return &Dataset{Format: FormatCIFAR10, Train: train, Test: test, ClassNames: names}, 10, nil
}

func openCIFAR100(dir string) (*Dataset, int, error) {
	train, err := readCIFARFiles([]string{filepath.Join(dir, "train.bin")}, 2, 100)
	if err != nil {
		return nil, 0, err
	}
	test, err := readCIFARFiles([]string{filepath.Join(dir, "test.bin")}, 2, 100)
	if err != nil {
		return nil, 0, err
	}
	names, err := readNames(filepath.Join(dir, "fine_label_names.txt"), 100)
	if err != nil {
		return nil, 0, err
	}
	return &Dataset{Format: FormatCIFAR100, Train: train, Test: test, ClassNames: names}, 100, nil
}
