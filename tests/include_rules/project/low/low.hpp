// The bottom folder: includes nothing of the project.
#pragma once

int low_value();
