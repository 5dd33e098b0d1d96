‚
tiny