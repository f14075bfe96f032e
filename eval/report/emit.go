package report

import (
	"io"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/outfile"
	"github.com/unlearn-tool/unlearn/schema"
)

// Emit writes a measured model's outputs: the terminal table to table,
// metrics.json to jsonPath ("-": to stdout) and the HTML report to
// htmlPath (Files). The files are rendered first and put in place together
// (outfile.WriteFiles), so an error leaves none behind; a failed write of
// the table fails nothing. Its notes go to info (the log), beside the table.
func Emit(rep *schema.Report, ms eval.Measurements, jsonPath, htmlPath string, table, stdout io.Writer,
	info func(event, text string, fields ...any)) error {
	files, err := Files(rep, nil, ms, jsonPath, htmlPath)
	if err != nil {
		return err
	}
	_ = WriteTable(table, rep)
	Log(rep, info) // the notes: the log's, beside the table
	if err := outfile.WriteFiles(files); err != nil {
		return err
	}
	if jsonPath == "-" {
		b, err := JSON(rep)
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}
	return nil
}
