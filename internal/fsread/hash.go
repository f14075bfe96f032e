package fsread

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// HashPath returns the SHA-256 of a file, or of a folder's content: the
// hash of the lines "<sha256 of file>  ./<path relative to the folder>\n"
// of every regular file below it, sorted by path, which is what
//
//	(cd DIR && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum
//
// prints for names without spaces or special characters. Hidden files are
// included; symbolic links are followed for the top path only. Every
// record of an input (metrics.json, the experiment records, artifacts.json)
// hashes it with this.
func HashPath(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return HashFile(path)
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(path, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	slices.Sort(files)
	h := sha256.New()
	for _, f := range files {
		s, err := HashFile(filepath.Join(path, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s  ./%s\n", s, f)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashFile returns the hex SHA-256 of the file at path.
func HashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
