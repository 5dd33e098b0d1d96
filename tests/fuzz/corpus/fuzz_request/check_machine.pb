ªqiturning { clip walk_turn_left loop  STOP stopping }
stopping { clip walk_stop  END turning  GO turning }
tiny