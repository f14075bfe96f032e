package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
)

// dataCommand lists a split example by example (data.List): the ids a
// forget file refers to and, for image folders, the file each one is.
type dataOptions struct {
	data        dataOpts
	split, json string
	cmdTable
}

func dataCommand() *cli.Command {
	o := &dataOptions{}
	o.rows = []row{
		field("data", "", &o.data.path, "", "dataset, as for the other commands (default: the bundled Fashion-MNIST subset)"),
		field("split", "", &o.split, "train", "train (the ids of --forget) or test"),
		field("json", "", &o.json, "", "write the listing as JSON to `FILE` (- for stdout) instead of the table"),
	}
	return &cli.Command{
		Name: "data",
		Usage: "list a dataset's examples: id, label, class and (image folders) file, the ids " +
			"--forget refers to",
		ArgsUsage: " ",
		Flags:     flagsOf(o.rows),
		Action:    action(o),
	}
}

func (o *dataOptions) validate() error {
	if o.split != "train" && o.split != "test" {
		return usagef("--split %q: must be train or test", o.split)
	}
	return nil
}

func (o *dataOptions) run(c *cli.Context) error {
	if err := checkFlags(c, "json"); err != nil {
		return err
	}
	ds, err := o.data.open(c)
	if err != nil {
		return err
	}
	l, err := data.List(ds, o.split)
	if err != nil {
		return err
	}
	if o.json != "" {
		return writeJSON(c, o.json, l)
	}
	return l.WriteText(c.App.Writer)
}
