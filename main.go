// Command tdsc denoises multispectral images with two-dimensional sparse
// coding. See README.md.
package main

import (
	"os"

	"tdsc/cmd"
)

func main() { os.Exit(cmd.Main()) }
