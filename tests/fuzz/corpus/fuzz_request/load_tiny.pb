²
tiny