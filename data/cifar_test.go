package data

import (
	"path/filepath"
	"testing"
)

// cifarRecord returns a record whose pixel (c, y, x) is (seed + c*7 + y*3 + x) % 256.
func cifarRecord(labels []byte, seed int) []byte {
	r := append([]byte(nil), labels...)
	for c := range 3 {
		for y := range 32 {
			for x := range 32 {
				r = append(r, byte((seed+c*7+y*3+x)%256))
			}
		}
	}
	return r
}

func writeCIFAR10(t *testing.T, dir string) {
	t.Helper()
	for b, name := range cifar10Train {
		var buf []byte
		for k := range 2 { // 2 records per batch: ids 2b, 2b+1
			id := 2*b + k
			buf = append(buf, cifarRecord([]byte{byte(id % 10)}, id)...)
		}
		writeFile(t, dir, name, buf)
	}
	writeFile(t, dir, "test_batch.bin", append(cifarRecord([]byte{9}, 100), cifarRecord([]byte{3}, 101)...))
	writeFile(t, dir, "batches.meta.txt", []byte("airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n\n"))
}

func TestCIFAR10(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cifar10")
	writeCIFAR10(t, dir)
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != FormatCIFAR10 || d.Classes != 10 || d.Train.Len() != 10 || d.Test.Len() != 2 || d.Train.Shape() != [3]int{3, 32, 32} {
		t.Fatalf("format %q classes %d, %d/%d examples of %v", d.Format, d.Classes, d.Train.Len(), d.Test.Len(), d.Train.Shape())
	}
	if d.ClassNames[9] != "truck" || len(d.ClassNames) != 10 {
		t.Errorf("class names %q", d.ClassNames)
	}
	for id := range 10 { // ids run through batch 1, then 2, ...
		if d.Train.Label(id) != id%10 {
			t.Errorf("label %d = %d", id, d.Train.Label(id))
		}
		// pixel (c=2, y=5, x=30) of id: (id + 14 + 15 + 30) % 256
		if got, want := pixel(t, d.Train, id, 2, 5, 30), float32((id+59)%256)/255; !near(got, want) {
			t.Errorf("id %d pixel = %v, want %v", id, got, want)
		}
	}
	if d.Test.Label(0) != 9 || d.Test.Label(1) != 3 {
		t.Errorf("test labels %d %d", d.Test.Label(0), d.Test.Label(1))
	}
	// one level of nesting, as the tarball unpacks
	if d2, err := Open(filepath.Dir(dir), Options{}); err == nil {
		t.Errorf("parent of the folder opened as %s", d2.Format)
	}
	nested := t.TempDir()
	writeCIFAR10(t, filepath.Join(nested, "cifar-10-batches-bin"))
	if d2, err := Open(nested, Options{}); err != nil || d2.Train.Len() != 10 {
		t.Errorf("nested folder: %v", err)
	}
}

func TestCIFAR10Errors(t *testing.T) {
	t.Run("truncated", func(t *testing.T) {
		dir := t.TempDir()
		writeCIFAR10(t, dir)
		writeFile(t, dir, "data_batch_3.bin", append(cifarRecord([]byte{1}, 0), 1, 2, 3))
		_, err := Open(dir, Options{})
		wantErr(t, err, "data_batch_3.bin", "truncated record 1: expected 3073 bytes, got 3")
	})
	t.Run("label", func(t *testing.T) {
		dir := t.TempDir()
		writeCIFAR10(t, dir)
		writeFile(t, dir, "test_batch.bin", append(cifarRecord([]byte{1}, 0), cifarRecord([]byte{10}, 0)...))
		_, err := Open(dir, Options{})
		wantErr(t, err, "test_batch.bin", "record 1: label 10 out of range [0, 10)")
	})
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		writeCIFAR10(t, dir)
		writeFile(t, dir, "batches.meta.txt", []byte("a\nb\n"))
		_, err := Open(dir, Options{})
		wantErr(t, err, "batches.meta.txt", "2 class names, want 10")
	})
}

func TestCIFAR100(t *testing.T) {
	dir := t.TempDir()
	var train []byte
	for i := range 3 {
		train = append(train, cifarRecord([]byte{byte(i), byte(97 + i)}, i)...)
	}
	writeFile(t, dir, "train.bin", train)
	writeFile(t, dir, "test.bin", cifarRecord([]byte{19, 42}, 7))
	d, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != FormatCIFAR100 || d.Classes != 100 || d.Train.Len() != 3 || d.ClassNames != nil {
		t.Fatalf("format %q classes %d len %d names %v", d.Format, d.Classes, d.Train.Len(), d.ClassNames)
	}
	for i := range 3 {
		if d.Train.Label(i) != 97+i { // fine label, not coarse
			t.Errorf("label %d = %d", i, d.Train.Label(i))
		}
	}
	if d.Test.Label(0) != 42 {
		t.Errorf("test label %d", d.Test.Label(0))
	}
	if got, want := pixel(t, d.Test, 0, 1, 31, 0), float32(7+7+93)/255; !near(got, want) {
		t.Errorf("pixel = %v, want %v", got, want)
	}
	writeFile(t, dir, "train.bin", append(train, cifarRecord([]byte{0, 100}, 0)...))
	_, err = Open(dir, Options{})
	wantErr(t, err, "train.bin", "record 3: label 100 out of range [0, 100)")
	writeFile(t, dir, "train.bin", train[:3074+100])
	_, err = Open(dir, Options{})
	wantErr(t, err, "train.bin", "truncated record 1: expected 3074 bytes, got 100")
}
