/* placeholder until the CLI lands */
#include <stdio.h>
#include "smelt.h"
int main(void)
{
    puts("smelt");
    return 0;
}
