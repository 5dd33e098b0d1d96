²
spare