package main

import (
	"github.com/urfave/cli/v2"

	"github.com/unlearn-tool/unlearn/data"
)

// augmentFlag is --augment, shared by the main command and `unlearn train`.
func augmentFlag(dest *string, what string) cli.Flag {
	return &cli.StringFlag{Name: "augment", Destination: dest, Value: "none",
		Usage: "augment " + what + " as torchvision's transforms before Normalize: " +
			"pad=N is RandomCrop(size, padding=N) (N zero pixels each side, at most half the image's side, a " +
			"random crop back to the image size), " +
			"flip is RandomHorizontalFlip(); comma-separated, e.g. pad=4,flip (the CIFAR recipe); none trains " +
			"on the images as they are"}
}

// parseAugment reads --augment (--<prefix>augment); an error is a usage
// error.
func parseAugment(v, prefix string) (data.Augment, error) {
	a, err := data.ParseAugment(v)
	if err != nil {
		return data.Augment{}, usagef("--%s%v", prefix, err)
	}
	return a, nil
}
