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
}

func dataCommand() *cli.Command {
	o := &dataOptions{}
	return &cli.Command{
		Name: "data",
		Usage: "list a dataset's examples: id, label, class and (image folders) file, the ids " +
			"--forget refers to",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "data", Destination: &o.data.path,
				Usage: "dataset, as for the other commands (default: the bundled " +
					"Fashion-MNIST subset)"},
			&cli.StringFlag{Name: "split", Destination: &o.split, Value: "train", Usage: "train (the ids of --forget) or test"},
			&cli.StringFlag{Name: "json", Destination: &o.json, Usage: "write the listing as JSON to `FILE` (- for stdout) " +
				"instead of the table"},
		},
		Action: action(o),
	}
}

func (o *dataOptions) complete(c *cli.Context) error { return noArgs(c) }

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
