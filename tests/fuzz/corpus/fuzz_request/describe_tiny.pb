ª
tiny