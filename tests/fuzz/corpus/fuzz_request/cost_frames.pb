Р'
default╛%млл=*LeftFoot*Hips