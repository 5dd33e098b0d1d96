º
tiny