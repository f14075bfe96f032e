package report

import (
	"encoding/json"
	"fmt"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// Files renders rep as metrics.json (indented, newline-terminated) to
// jsonPath and page as the HTML report (with the plots of ms) to htmlPath,
// keyed by path; an empty path, and "-" for the JSON (stdout, which the
// caller prints), are left out. page is rep with its notes worded for the
// page (setting.Words) where they name settings; nil is rep. Rendering
// everything first lets the caller write all files or none.
func Files(rep, page *schema.Report, ms eval.Measurements, jsonPath, htmlPath string) (map[string][]byte, error) {
	if page == nil {
		page = rep
	}
	files := map[string][]byte{}
	if jsonPath != "" && jsonPath != "-" {
		b, err := JSON(rep)
		if err != nil {
			return nil, err
		}
		files[jsonPath] = b
	}
	if htmlPath != "" {
		b, err := HTML(page, ms)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", htmlPath, err)
		}
		files[htmlPath] = b
	}
	return files, nil
}

// JSON renders v as metrics.json does: indented by two spaces, with a
// final newline.
func JSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
