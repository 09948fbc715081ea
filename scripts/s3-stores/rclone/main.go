// A minimal rclone: the local backend and `rclone serve s3` only (the full rclone builds every backend and command).
package main

import (
	_ "github.com/rclone/rclone/backend/local"
	"github.com/rclone/rclone/cmd"
	_ "github.com/rclone/rclone/cmd/serve/s3"
)

func main() {
	cmd.Main()
}
