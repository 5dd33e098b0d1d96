Â
tiny